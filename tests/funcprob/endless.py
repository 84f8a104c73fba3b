def twoSum(nums, target):
    while True:
        pass
