class Solution:
    def twoSum(self, nums, target):
        print("checking", len(nums))
        for i in range(len(nums)):
            for j in range(len(nums)):
                if i != j and nums[i] + nums[j] == target:
                    return [j, i]
