/* test_problem: loading ICPC problem packages (problem.c) from tests/problems-fixtures/. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/grading/lang.h"
#include "judge/grading/problem.h"

#define FIX "tests/problems-fixtures/"

static struct problem P;
static char err[1024];

/* The shipped languages and the package format's table (languages/problem/). */
static const struct lang_registry *langs(void)
{
	static struct lang_registry reg;
	static bool loaded;
	if (!loaded) {
		char e[512];
		cr_assert_eq(lang_load_dir(&reg, "languages", e, sizeof e), 0, "%s", e);
		loaded = true;
	}
	return &reg;
}

static void load_ok(const char *dir)
{
	err[0] = 0;
	int rc = problem_load(&P, dir, langs(), err, sizeof err);
	cr_assert_eq(rc, 0, "loading %s failed: %s", dir, err);
}

static void load_fails(const char *dir, const char *needle)
{
	err[0] = 0;
	int rc = problem_load(&P, dir, langs(), err, sizeof err);
	cr_assert_eq(rc, -1, "loading %s should fail", dir);
	cr_assert(strstr(err, needle), "error for %s should mention '%s', got '%s'", dir, needle,
		  err);
	cr_assert_null(P.tests, "a failed load leaves the problem empty");
}

static const struct problem_test *test_named(const char *name)
{
	for (int i = 0; i < P.ntests; i++)
		if (!strcmp(P.tests[i].name, name))
			return &P.tests[i];
	cr_assert_fail("no test named %s", name);
	return NULL;
}

static const struct problem_submission *sub_at(const char *path)
{
	for (int i = 0; i < P.nsubs; i++)
		if (!strcmp(P.subs[i].path, path))
			return &P.subs[i];
	cr_assert_fail("no submission %s", path);
	return NULL;
}

static void teardown(void)
{
	problem_release(&P);
}

TestSuite(problem, .fini = teardown);

Test(problem, legacy_order_samples_first_then_lexicographic)
{
	load_ok(FIX "legacy-groups");
	const char *want[] = {"sample/10",	 "sample/9",	  "sample/a",
			      "sample/b",	 "secret/g1/01",  "secret/g1/02",
			      "secret/g1/sub/x", "secret/g10/01", "secret/g2/01"};
	cr_assert_eq(P.ntests, 9, "got %d tests", P.ntests);
	for (int i = 0; i < 9; i++)
		cr_assert_str_eq(P.tests[i].name, want[i], "test %d", i);
	cr_assert_eq(P.nsamples, 4);
	cr_assert(P.tests[0].is_sample && !P.tests[4].is_sample);
	cr_assert(strstr(P.tests[4].in_path, "legacy-groups/data/secret/g1/01.in"));
	cr_assert(strstr(P.tests[4].ans_path, "legacy-groups/data/secret/g1/01.ans"));
}

Test(problem, legacy_metadata)
{
	load_ok(FIX "legacy-groups");
	cr_assert_eq(P.format, PROB_LEGACY);
	cr_assert_str_eq(P.format_version, "legacy");
	cr_assert_str_eq(P.id, "legacy-groups");
	cr_assert_str_eq(P.name, "Legacy Groups", "name from \\problemname, got %s", P.name);
	cr_assert_not(P.custom_validator);
	cr_assert_null(P.unsupported);
	cr_assert_eq(P.limits.time_limit_s, 0, "legacy packages state no time limit");
	cr_assert_eq(P.limits.time_multiplier, 3);
	cr_assert_eq(P.limits.time_safety_margin, 2);
	cr_assert_eq(P.limits.memory_mb, 512);
	cr_assert_eq(P.limits.output_mb, 4);
	cr_assert(strstr(P.statement_path, "problem_statement/problem.en.tex"));
}

Test(problem, legacy_flags_closest_testdata_yaml_wins_whole)
{
	load_ok(FIX "legacy-groups");
	const struct problem_test *s = test_named("sample/a");
	cr_assert_eq(s->cmp.mode, CMP_TOKENS);
	cr_assert_float_eq(s->cmp.float_abs_tol, 1e-6, 1e-12, "problem validator_flags apply");
	cr_assert_float_eq(s->cmp.float_rel_tol, 1e-6, 1e-12);
	cr_assert_not(s->cmp.case_sensitive);

	const struct problem_test *g1 = test_named("secret/g1/01");
	cr_assert(g1->cmp.case_sensitive, "g1/testdata.yaml");
	cr_assert_float_eq(g1->cmp.float_abs_tol, 1e-6, 1e-12, "problem flags come first");
	cr_assert_eq(g1->validator_argc, 3);
	cr_assert_str_eq(g1->validator_args[0], "float_tolerance");
	cr_assert_str_eq(g1->validator_args[2], "case_sensitive");
	cr_assert_null(g1->validator_args[3]);

	const struct problem_test *sub = test_named("secret/g1/sub/x");
	cr_assert(sub->cmp.space_change_sensitive, "sub/testdata.yaml");
	cr_assert_not(sub->cmp.case_sensitive, "legacy: the closest file replaces, not merges");

	const struct problem_test *g2 = test_named("secret/g2/01");
	cr_assert_not(g2->cmp.case_sensitive, "g1's flags do not leak into g2");
	cr_assert_eq(g2->validator_argc, 2);
}

Test(problem, legacy_submissions_and_languages)
{
	load_ok(FIX "legacy-groups");
	cr_assert_eq(P.nsubs, 5, "got %d submissions", P.nsubs);
	const struct problem_submission *a = sub_at("accepted/a.py");
	cr_assert_str_eq(a->folder, "accepted");
	cr_assert_str_eq(a->prog.lang, "python");
	cr_assert_str_eq(a->prog.main_file, "a.py");

	const struct problem_submission *m = sub_at("accepted/multi");
	cr_assert_str_eq(m->prog.lang_code, "cpp");
	cr_assert_str_eq(m->prog.lang, "cpp");
	cr_assert_eq(m->prog.nfiles, 3);
	cr_assert_str_eq(m->prog.main_file, "main.cpp");

	const struct problem_submission *j = sub_at("wrong_answer/Main.java");
	cr_assert_str_eq(j->prog.lang_code, "java");
	cr_assert_null(j->prog.lang);
	cr_assert(j->prog.unsupported && strstr(j->prog.unsupported, "java"));

	const struct problem_submission *py2 = sub_at("wrong_answer/old.py");
	cr_assert_str_eq(py2->prog.lang_code, "python2", "a python2 shebang makes it Python 2");
	cr_assert_null(py2->prog.lang);

	const struct problem_submission *c = sub_at("run_time_error/prog");
	cr_assert_str_eq(c->prog.lang, "c");
	cr_assert_str_eq(c->prog.main_file, "a.c", "no main.*: the smallest source file");
	cr_assert_eq(c->prog.nfiles, 3, "headers belong to the program");
}

Test(problem, modern_2025_09)
{
	load_ok(FIX "modern");
	cr_assert_eq(P.format, PROB_2025_09);
	cr_assert_str_eq(P.name, "Modern");
	cr_assert_float_eq(P.limits.time_limit_s, 1.5, 1e-9);
	cr_assert_float_eq(P.limits.ac_to_time_limit, 3, 1e-9);
	cr_assert_float_eq(P.limits.time_limit_to_tle, 2, 1e-9);
	cr_assert_float_eq(P.limits.time_resolution, 0.5, 1e-9);
	cr_assert_eq(P.limits.memory_mb, 128);
	cr_assert(P.custom_validator, "output_validator/ makes a custom validator");
	cr_assert_str_eq(P.validator.lang, "cpp");
	cr_assert_str_eq(P.validator.main_file, "validate.cc");
	cr_assert_eq(P.validator.nfiles, 2);
	cr_assert(strstr(P.statement_path, "statement/problem.en.md"));
	cr_assert_eq(P.ntests, 4);
	for (int i = 0; i < P.ntests; i++)
		cr_assert_eq(P.tests[i].cmp.mode, CMP_CHECKER);
}

Test(problem, modern_args_inherit_key_by_key)
{
	load_ok(FIX "modern");
	cr_assert_eq(test_named("sample/1")->validator_argc, 0);
	const struct problem_test *g1 = test_named("secret/g1/01");
	cr_assert_eq(g1->validator_argc, 2, "g1's test_group.yaml has no args: secret's apply");
	cr_assert_str_eq(g1->validator_args[0], "--mode");
	cr_assert_str_eq(g1->validator_args[1], "strict");
	const struct problem_test *g2 = test_named("secret/g2/01");
	cr_assert_eq(g2->validator_argc, 1);
	cr_assert_str_eq(g2->validator_args[0], "--g2");
	const struct problem_test *one = test_named("secret/g2/02");
	cr_assert_eq(one->validator_argc, 2, "02.yaml configures that test alone");
	cr_assert_str_eq(one->validator_args[1], "two words");
}

Test(problem, interactive_is_loaded)
{
	load_ok(FIX "interactive");
	cr_assert(P.interactive);
	cr_assert_eq(P.format, PROB_2023_07);
	cr_assert_null(P.unsupported, "got %s", P.unsupported);
	cr_assert(P.custom_validator, "its validator talks to the submission");
	cr_assert_eq(P.ntests, 1);
	cr_assert_null(P.tests[0].ans_path);
	cr_assert_float_eq(P.limits.time_limit_to_tle, 4, 1e-9);
}

static char tmpdir[64];

static void make_tmp(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/test_problem.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

/* A package in tmpdir with problem.yaml holding yaml, one test and a validator. */
static void write_pkg(const char *yaml)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && mkdir -p data/secret output_validators/v && echo 1 >data/secret/1.in "
		 "&& echo 1 >data/secret/1.ans && echo 'import sys; sys.exit(42)' "
		 ">output_validators/v/validate.py",
		 tmpdir);
	cr_assert_eq(system(cmd), 0);
	char path[128];
	snprintf(path, sizeof path, "%s/problem.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(yaml, f);
	fclose(f);
}

Test(problem, scoring_groups_are_read)
{
	load_ok(FIX "examples/oddecho");
	cr_assert(P.scoring);
	cr_assert_null(P.unsupported, "got %s", P.unsupported);
	/* groups: sample, secret, secret/group1, secret/group2, parents first */
	cr_assert_eq(P.ngroups, 4);
	cr_assert_str_eq(P.groups[0].name, "sample");
	cr_assert_str_eq(P.groups[1].name, "secret");
	cr_assert_str_eq(P.groups[2].name, "secret/group1");
	cr_assert_eq(P.groups[2].parent, 1);
	cr_assert_eq(P.groups[1].parent, -1);
	cr_assert_eq(P.groups[2].agg, PROB_AGG_MIN);
	cr_assert_eq(P.groups[1].agg, PROB_AGG_SUM);
	cr_assert(P.groups[3].has_accept && P.groups[3].accept_score == 80);
	cr_assert(P.groups[1].has_range && P.groups[1].range_hi == 100);
	cr_assert_eq(P.groups[1].max_score, -1, "not given: unbounded");
	cr_assert_eq(test_named("secret/group2/3")->group, 3);
	cr_assert_eq(test_named("sample/1")->group, 0);
	problem_release(&P);
}

Test(problem, scoring_2025_09_defaults, .init = make_tmp, .fini = remove_tmp)
{
	write_pkg("problem_format_version: 2025-09\ntype: scoring\n");
	load_ok(tmpdir);
	cr_assert_null(P.unsupported, "got %s", P.unsupported);
	cr_assert_str_eq(P.groups[0].name, "secret");
	cr_assert_eq(P.groups[0].max_score, 100, "data/secret sums to 100 by default");
	cr_assert_eq(P.groups[0].agg, PROB_AGG_SUM);
	problem_release(&P);
}

Test(problem, legacy_grading_sets_the_test_scores, .init = make_tmp, .fini = remove_tmp)
{
	write_pkg("name: x\ntype: scoring\ngrading:\n  accept_score: 5\n  "
		  "show_test_data_groups: true\n");
	load_ok(tmpdir);
	cr_assert_null(P.unsupported, "got %s", P.unsupported);
	cr_assert(P.groups[0].has_accept);
	cr_assert_float_eq(P.groups[0].accept_score, 5, 1e-9);
	problem_release(&P);
}

Test(problem, legacy_multi_pass_is_graded_as_multi_pass)
{
	load_ok(FIX "legacy-multi-pass");
	cr_assert_eq(P.format, PROB_LEGACY);
	cr_assert(P.multi_pass, "validation: custom multi-pass");
	cr_assert(P.custom_validator);
	cr_assert_null(P.unsupported, "got %s", P.unsupported);
	cr_assert_eq(P.limits.validation_passes, 2, "the format's default");
	problem_release(&P);
}

Test(problem, unknown_kinds_are_unsupported, .init = make_tmp, .fini = remove_tmp)
{
	const char *cases[][2] = {
	    {"problem_format_version: 2023-07\ntype: pass-fail hologram\n",
	     "problem type 'hologram' is not supported"},
	    {"name: x\nvalidation: custom telepathic\n",
	     "validation 'custom telepathic' is not supported"},
	    {"problem_format_version: 2025-09\ntype: [pass-fail]\n", NULL},
	    {"problem_format_version: 2025-09\ntype: multi-pass\n", NULL},
	    {"problem_format_version: 2025-09\ntype: scoring\n", NULL},
	    {"problem_format_version: 2025-09\ntype: [interactive, multi-pass]\n",
	     "interactive multi-pass problems are not supported"},
	    {"problem_format_version: 2025-09\ntype: submit-answer\n",
	     "submit-answer problems are not supported"},
	    {"name: x\nvalidation: custom interactive\n", NULL},
	    {"name: x\ntype: pvp\nvalidation: custom\n", "problem type 'pvp' is not supported"},
	    {"name: x\ntype: scoring\ngrading:\n  objective: min\n",
	     "grading objective 'min' is not supported"},
	    {"name: x\nvalidation: custom score\n", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		write_pkg(cases[i][0]);
		load_ok(tmpdir);
		if (cases[i][1])
			cr_assert(P.unsupported && strstr(P.unsupported, cases[i][1]),
				  "case %zu: got %s", i, P.unsupported);
		else
			cr_assert_null(P.unsupported, "case %zu: got %s", i, P.unsupported);
		problem_release(&P);
	}
}

Test(problem, bad_packages_say_what_is_wrong)
{
	load_fails(FIX "bad-yaml", "problem.yaml:");
	load_fails(FIX "bad-no-ans", "no answer file");
	load_fails(FIX "bad-flags", "bad output validator flags");
	load_fails(FIX "bad-custom", "no output_validator");
	load_fails(FIX "bad-limits", "limits.time_limit");
	load_fails(FIX "bad-clash", "both a test case and a group");
	load_fails(FIX "bad-empty", "no test cases");
	load_fails(FIX "bad-version", "problem_format_version");
	load_fails(FIX "no-yaml", "no problem.yaml");
	load_fails(FIX "does-not-exist", "no problem package");
}

Test(problem, ids)
{
	cr_assert(problem_id_valid("sum"));
	cr_assert(problem_id_valid("two-sum"));
	cr_assert(problem_id_valid("a_1"));
	cr_assert(problem_id_valid("9lives"));
	const char *bad[] = {"",   "..", ".",	"../etc", "a/b",  "/abs", "Sum",
			     "-x", "_x", "a b", "a.b",	  "a\\b", "é"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_not(problem_id_valid(bad[i]), "'%s' must be refused", bad[i]);
	char longid[80];
	memset(longid, 'a', 65);
	longid[65] = 0;
	cr_assert_not(problem_id_valid(longid));
}

Test(problem, open_by_id)
{
	cr_assert_eq(problem_open(&P, FIX, "../problems-fixtures/modern", langs(), err, sizeof err),
		     -2);
	cr_assert_eq(problem_open(&P, FIX, "nothing-here", langs(), err, sizeof err), -2);
	cr_assert_eq(problem_open(&P, FIX, "no-yaml", langs(), err, sizeof err), -2);
	cr_assert_eq(problem_open(&P, FIX, "bad-flags", langs(), err, sizeof err), -1);
	cr_assert_eq(problem_open(&P, FIX, "modern", langs(), err, sizeof err), 0, "%s", err);
	cr_assert_str_eq(P.id, "modern");
}

Test(problem, list)
{
	char **ids;
	int n = problem_list(FIX, &ids, err, sizeof err);
	cr_assert_eq(n, 19, "got %d", n);
	cr_assert_str_eq(ids[0], "bad-clash");
	bool has_modern = false, has_noyaml = false;
	for (int i = 0; i < n; i++) {
		has_modern |= !strcmp(ids[i], "modern");
		has_noyaml |= !strcmp(ids[i], "no-yaml");
	}
	cr_assert(has_modern && !has_noyaml);
	cr_assert_null(ids[n]);
	problem_ids_free(ids);
	cr_assert_eq(problem_list(FIX "nope", &ids, err, sizeof err), -1);
}

Test(problem, time_limit_2025_09)
{
	struct problem_limits l = {
	    .ac_to_time_limit = 2, .time_limit_to_tle = 1.5, .time_resolution = 1};
	double out = 0;
	cr_assert_eq(problem_infer_time_limit(&l, 0.3, -1, &out), 0);
	cr_assert_float_eq(out, 1, 1e-9);
	cr_assert_eq(problem_infer_time_limit(&l, 0.5, -1, &out), 0);
	cr_assert_float_eq(out, 1, 1e-9, "2 x 0.5 s is exactly 1 s, not 2");
	cr_assert_eq(problem_infer_time_limit(&l, 0.6, -1, &out), 0);
	cr_assert_float_eq(out, 2, 1e-9);
	cr_assert_eq(problem_infer_time_limit(&l, 0.6, 3.0, &out), 0, "2 s x 1.5 = 3 s <= T_tle");
	cr_assert_eq(problem_infer_time_limit(&l, 0.6, 2.9, &out), -1, "no limit fits");
	l.time_resolution = 0.5;
	cr_assert_eq(problem_infer_time_limit(&l, 0.6, -1, &out), 0);
	cr_assert_float_eq(out, 1.5, 1e-9);
	cr_assert_eq(problem_infer_time_limit(&l, 0, -1, &out), 0);
	cr_assert_float_eq(out, 0.5, 1e-9, "never zero");
}

Test(problem, time_limit_legacy)
{
	struct problem_limits l = {.time_multiplier = 5, .time_safety_margin = 2};
	double lim, margin;
	problem_legacy_time_limit(&l, 0.42, &lim, &margin);
	cr_assert_float_eq(lim, 2, 1e-9);
	cr_assert_float_eq(margin, 4, 1e-9);
	problem_legacy_time_limit(&l, 0.05, &lim, &margin);
	cr_assert_float_eq(lim, 1, 1e-9, "at least one second");
	cr_assert_float_eq(margin, 2, 1e-9, "margin at least limit + 1");
	l.time_safety_margin = 4;
	problem_legacy_time_limit(&l, 1.0, &lim, &margin);
	cr_assert_float_eq(lim, 5, 1e-9);
	cr_assert_float_eq(margin, 20, 1e-9);
}

Test(problem, languages_of_files)
{
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.c"), "c");
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.C"), "cpp");
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.cc"), "cpp");
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.c++"), "cpp");
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.py"), "python3");
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.js"), "javascript");
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.cs"), "csharp");
	cr_assert_null(problem_file_lang_code(langs(), "x.h"));
	cr_assert_null(problem_file_lang_code(langs(), "Makefile"));
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.py2"), "python2");
	cr_assert_str_eq(problem_file_lang_code(langs(), "x.mjs"), "javascript");
	cr_assert_str_eq(lang_by_problem_language(langs(), "javascript")->name, "node");
	cr_assert_str_eq(lang_by_problem_language(langs(), "python3")->name, "python");
	cr_assert_null(lang_by_problem_language(langs(), "java"));
	/* the format's table as problemtools has it: every language, ours or not */
	cr_assert_eq(langs()->nproblem_langs, 22);
	cr_assert_eq(lang_problem_find(langs(), "haskell")->priority, 600);
}

Test(problem, included_files)
{
	load_ok(FIX "verify-include");
	cr_assert_null(P.unsupported);
	char *dir, **names;
	cr_assert_eq(problem_include_files(&P, "python3", &dir, &names), 1);
	cr_assert(strstr(dir, "verify-include/include/python3"), "%s", dir);
	cr_assert_str_eq(names[0], "helper.py");
	free(dir);
	problem_names_free(names);
	cr_assert_eq(problem_include_files(&P, "c", &dir, &names), 2);
	cr_assert_str_eq(names[0], "helper.c");
	cr_assert_str_eq(names[1], "helper.h");
	free(dir);
	problem_names_free(names);
	cr_assert_eq(problem_include_files(&P, "javascript", &dir, &names), 1,
		     "no include/javascript/");
	cr_assert(strstr(dir, "include/default"), "%s", dir);
	cr_assert_str_eq(names[0], "offset.txt");
	free(dir);
	problem_names_free(names);
	cr_assert_eq(problem_include_files(&P, NULL, &dir, &names), 1, "no code: include/default/");
	free(dir);
	problem_names_free(names);
	problem_release(&P);
	load_ok(FIX "modern");
	cr_assert_eq(problem_include_files(&P, "python3", &dir, &names), 0);
	cr_assert_null(dir);
}

/* DOMjudge's way of saying what a submission must get (problem_expect.c), on a
 * package of our own in DOMjudge's style. */
Test(problem, domjudge_expected_results)
{
	load_ok(FIX "domjudge-style");
	struct problem_expect e;
	struct {
		const char *path;
		bool annotated;
		const char *names; /* joined by ',' */
	} cases[] = {
	    {"accepted/hello.sh", true, "CORRECT"},
	    /* the folder's result alone, from an annotation that allows two */
	    {"run_time_error/exit3.py", true, "RUN-ERROR"},
	    /* a folder that is no verdict: the annotation's results */
	    {"mixed/either.py", true, "CORRECT,WRONG-ANSWER"},
	    /* given twice in one file: refused (the folder decides) */
	    {"wrong_answer/twice.py", false, ""},
	    /* the score tag with names holds results */
	    {"wrong_answer/score_tag.py", true, "WRONG-ANSWER"},
	    {"check_manually/look.py", true, "CHECK-MANUALLY"},
	    {"no_output/silent.c", false, ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_assert_eq(problem_expect_read(sub_at(cases[i].path), &e, err, sizeof err), 0,
			     "%s", err);
		cr_expect_eq(e.annotated, cases[i].annotated, "%s", cases[i].path);
		char joined[256] = "";
		for (int k = 0; k < e.n; k++)
			snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s",
				 k ? "," : "", e.names[k]);
		cr_expect_str_eq(joined, cases[i].names, "%s", cases[i].path);
		cr_expect_not(e.has_score, "%s", cases[i].path);
	}
	/* the entry point of a folder comes from submissions.json */
	cr_expect_str_eq(sub_at("accepted/two")->prog.main_file, "start.js");
	cr_expect_str_eq(sub_at("accepted/two")->prog.lang, "node");
	/* shell scripts are bash */
	cr_expect_str_eq(sub_at("accepted/hello.sh")->prog.lang, "bash");
}

Test(problem, domjudge_result_names)
{
	const char *cases[][2] = {
	    {"accepted", "CORRECT"},
	    {"wrong_answer", "WRONG-ANSWER"},
	    {"time_limit_exceeded", "TIMELIMIT"},
	    {" run_time_error ", "RUN-ERROR"},
	    {"compiler_error", "COMPILER-ERROR"},
	    {"no_output", "NO-OUTPUT"},
	    {"output_limit", "OUTPUT-LIMIT"},
	    {"Wrong-Answer", "WRONG-ANSWER"},
	    {"mixed-verdicts", "MIXED-VERDICTS"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[32];
		problem_expect_name(cases[i][0], strlen(cases[i][0]), out, sizeof out);
		cr_expect_str_eq(out, cases[i][1], "%s", cases[i][0]);
	}
}
