/* test_piston: Piston's version selection (judge/api/piston.c). */
#include <criterion/criterion.h>

#include "judge/api/piston.h"

Test(piston, version_ranges)
{
	static const struct {
		const char *range;
		bool want;
	} cases[] = {
	    {"*", true},
	    {"", true},
	    {"x", true},
	    {"3.12.7", true},
	    {"v3.12.7", true},
	    {"=3.12.7", true},
	    {"3.12.6", false},
	    {"3", true},
	    {"3.12", true},
	    {"3.x", true},
	    {"3.12.x", true},
	    {"3.11", false},
	    {"4", false},
	    {">=3.12.7", true},
	    {">3.12.7", false},
	    {">3.11", true},
	    {">3.12", false},
	    {"<3.13", true},
	    {"<3.12.7", false},
	    {"<=3.12", true},
	    {"<=3.11", false},
	    {"~3.12.1", true},
	    {"~3.11.0", false},
	    {"~3", true},
	    {"^3.0.0", true},
	    {"^3.12.8", false},
	    {"^4", false},
	    {"^2.7", false},
	    {">=3 <4", true},
	    {">= 3.0.0 < 4", true},
	    {">=4 || 3.x", true},
	    {"2.x || 4.x", false},
	    {"3.0.0 - 3.13", true},
	    {"3.0 - 3.11", false},
	    {"3.12.7-rc1", true},
	    {"nonsense", false},
	    {"=>3", false},
	    {"3.12.7.1", false},
	    {"1.x.x", false},
	    {"3.x.x", true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_eq(piston_version_match(cases[i].range, "3.12.7"), cases[i].want,
			     "'%s' on 3.12.7: want %d", cases[i].range, cases[i].want);
	/* ^ below 1.0.0 holds the minor (or the patch) fixed */
	cr_expect(piston_version_match("^0.2.3", "0.2.9"));
	cr_expect(!piston_version_match("^0.2.3", "0.3.0"));
	cr_expect(!piston_version_match("^0.0.3", "0.0.4"));
	/* a version that is not X.Y.Z matches only itself */
	cr_expect(piston_version_match("odd", "odd"));
	cr_expect(!piston_version_match("*", "odd"));
}
