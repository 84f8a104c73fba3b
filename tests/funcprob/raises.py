def twoSum(nums, target):
    lookup = {}
    return [lookup[target], 0]
