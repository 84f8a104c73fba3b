/* test_package: a problem package's files as a checked tree (judge/grading/package.c),
 * from folders and from zips (made with zipfiles_write, and hostile ones with
 * Python's zipfile module, which writes any name and any file type), and
 * SHA-256 (common/sha256.c) against FIPS 180-4's vectors. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/strbuf.h"
#include "common/zipfiles.h"
#include "judge/grading/package.h"

static char tmp[256];

static void setup(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/judge-test-package.XXXXXX");
	cr_assert(mkdtemp(tmp));
}

static void teardown(void)
{
	package_rmtree(tmp);
}

/* Writes text to tmp/rel, making its folders. */
static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", tmp, rel);
	for (char *s = strchr(path + strlen(tmp) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static const struct package_caps caps = {.max_files = 100, .max_bytes = 1 << 20};

/* A small legacy package under tmp/dir. */
static void make_package(const char *dir)
{
	char p[256];
	snprintf(p, sizeof p, "%s/problem.yaml", dir);
	put(p, "name: Echo\n");
	snprintf(p, sizeof p, "%s/data/sample/1.in", dir);
	put(p, "1\n");
	snprintf(p, sizeof p, "%s/data/sample/1.ans", dir);
	put(p, "1\n");
	snprintf(p, sizeof p, "%s/data/secret/2.in", dir);
	put(p, "2\n");
	snprintf(p, sizeof p, "%s/data/secret/2.ans", dir);
	put(p, "2\n");
	snprintf(p, sizeof p, "%s/.git/HEAD", dir);
	put(p, "ref: x\n");
}

static char *hex_of(const char *s)
{
	unsigned char d[32];
	static char hex[65];
	sha256_buf(s, strlen(s), d);
	sha256_hex(d, hex);
	return hex;
}

Test(package, sha256_vectors_and_streaming)
{
	cr_assert_str_eq(hex_of(""),
			 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	cr_assert_str_eq(hex_of("abc"),
			 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cr_assert_str_eq(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
			 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* the same bytes fed in odd pieces */
	char big[1000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	unsigned char one[32], many[32];
	sha256_buf(big, sizeof big, one);
	struct sha256 s;
	sha256_init(&s);
	for (size_t i = 0, step = 1; i < sizeof big; i += step, step = step * 3 % 97 + 1)
		sha256_update(&s, big + i, i + step <= sizeof big ? step : sizeof big - i);
	sha256_final(&s, many);
	cr_assert_arr_eq(one, many, 32);
}

Test(package, path_rules)
{
	char why[160];
	/* DOMjudge's hello holds "submissions/compiler_error/bogus-filename/test-file
	 * name#\\.bogus ext": a backslash is a character like another on Linux */
	const char *good[] = {"problem.yaml",
			      "data/secret/g1/01.in",
			      "submissions/accepted/a b.py",
			      "statement/problem.fr.md",
			      "x..y",
			      "s/compiler_error/b/test-file name#\\.bogus ext",
			      "..\\..\\x",
			      NULL};
	const char *bad[] = {"",   "/etc/passwd", "../x",  "a/../../x", "a/./b",   "a//b",
			     "a/", "tab\there",	  "nl\nx", "bad\xff",	"del\x7f", NULL};
	for (int i = 0; good[i]; i++)
		cr_expect(package_path_valid(good[i], why, sizeof why), "%s: %s", good[i], why);
	for (int i = 0; bad[i]; i++)
		cr_expect(!package_path_valid(bad[i], why, sizeof why), "%s passed", bad[i]);
	char longname[PACKAGE_PATH_MAX + 2];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	cr_expect(!package_path_valid(longname, why, sizeof why));
}

Test(package, folder_files_sorted_dot_names_left_out_and_hash_stable, .init = setup,
     .fini = teardown)
{
	make_package("p");
	char dir[300], err[512];
	snprintf(dir, sizeof dir, "%s/p", tmp);
	struct package pk;
	cr_assert_eq(package_from_dir(&pk, dir, &caps, err, sizeof err), 0, "%s", err);
	cr_assert_eq(pk.nfiles, 5, "%d files (.git left out)", pk.nfiles);
	cr_assert_str_eq(pk.files[0].path, "data/sample/1.ans");
	cr_assert_str_eq(pk.files[4].path, "problem.yaml");
	cr_assert_str_eq(pk.files[4].hash, hex_of("name: Echo\n"));
	cr_assert_null(pk.tmp);
	char hash[65];
	snprintf(hash, sizeof hash, "%s", pk.hash);
	/* the manifest round-trips and hashes the same */
	cJSON *man = package_manifest_json(pk.files, pk.nfiles);
	struct package_file *files = NULL;
	int n = package_manifest_parse(man, &files, err, sizeof err);
	cr_assert_eq(n, 5, "%s", err);
	char again[65];
	package_hash(files, n, again);
	cr_assert_str_eq(again, hash);
	package_files_free(files, n);
	cJSON_Delete(man);
	package_release(&pk);
	/* one changed byte: another hash */
	put("p/data/secret/2.ans", "3\n");
	cr_assert_eq(package_from_dir(&pk, dir, &caps, err, sizeof err), 0, "%s", err);
	cr_assert_str_neq(pk.hash, hash);
	package_release(&pk);
}

Test(package, folder_refuses_links_and_caps_sizes_unread, .init = setup, .fini = teardown)
{
	make_package("p");
	char dir[300], path[400], err[512];
	snprintf(dir, sizeof dir, "%s/p", tmp);
	struct package pk;
	snprintf(path, sizeof path, "%s/data/secret/3.in", dir);
	cr_assert_eq(symlink("/etc/passwd", path), 0);
	cr_assert_eq(package_from_dir(&pk, dir, &caps, err, sizeof err), -1);
	cr_assert(strstr(err, "'data/secret/3.in' is a symbolic link"), "%s", err);
	unlink(path);
	/* a 10 GB sparse test file: refused by its size, in no time */
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, (off_t)10 << 30), 0);
	close(fd);
	cr_assert_eq(package_from_dir(&pk, dir, &caps, err, sizeof err), -1);
	/* this message comes from the size check before any read */
	cr_assert(strstr(err, "'data/secret/3.in' (10737418240 bytes) passes the cap"), "%s", err);
	unlink(path);
	struct package_caps few = {.max_files = 3, .max_bytes = 1 << 20};
	cr_assert_eq(package_from_dir(&pk, dir, &few, err, sizeof err), -1);
	cr_assert(strstr(err, "more than 3 files"), "%s", err);
	cr_assert_eq(package_from_dir(&pk, "/nonexistent/p", &caps, err, sizeof err), -1);
	cr_assert(strstr(err, "cannot open the folder"), "%s", err);
}

/* The zip of tmp/dir's files (zipfiles_write), names prefixed with prefix. */
static void zip_of(const char *dir, struct strbuf *zip)
{
	char err[512];
	struct package pk;
	cr_assert_eq(package_from_dir(&pk, dir, &caps, err, sizeof err), 0, "%s", err);
	char **names = calloc((size_t)pk.nfiles + 1, sizeof *names);
	for (int i = 0; i < pk.nfiles; i++)
		names[i] = pk.files[i].path;
	cr_assert_eq(zipfiles_write(zip, dir, names, pk.nfiles, 1 << 20, err, sizeof err), 0, "%s",
		     err);
	free(names);
	package_release(&pk);
}

Test(package, zip_round_trip_same_hash_as_folder, .init = setup, .fini = teardown)
{
	make_package("p");
	char dir[300], err[512];
	snprintf(dir, sizeof dir, "%s/p", tmp);
	struct package a, b;
	cr_assert_eq(package_from_dir(&a, dir, &caps, err, sizeof err), 0, "%s", err);
	struct strbuf zip = STRBUF_INIT;
	zip_of(dir, &zip);
	cr_assert_eq(package_from_zip(&b, zip.buf, zip.len, tmp, &caps, err, sizeof err), 0, "%s",
		     err);
	cr_assert_str_eq(a.hash, b.hash);
	cr_assert_eq(b.nfiles, a.nfiles);
	cr_assert_not_null(b.tmp);
	char yaml[600];
	snprintf(yaml, sizeof yaml, "%s/problem.yaml", b.dir);
	cr_assert_eq(access(yaml, R_OK), 0);
	char *made = strdup(b.tmp);
	package_release(&a);
	package_release(&b);
	cr_assert_neq(access(made, F_OK), 0, "the temporary folder is removed");
	free(made);
	strbuf_release(&zip);
}

/* A zip made by Python: entries "name=text", separated by '|' ("name@link=target"
 * is a symbolic link; "name%size" a deflated file of size zero bytes). */
static void py_zip(const char *out, const char *entries)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
		 "python3 - '%s' <<'EOF'\n"
		 "import sys, zipfile\n"
		 "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
		 "for e in '''%s'''.split('|'):\n"
		 "    if '@link=' in e:\n"
		 "        n, t = e.split('@link=')\n"
		 "        i = zipfile.ZipInfo(n); i.external_attr = 0o120777 << 16\n"
		 "        z.writestr(i, t)\n"
		 "    elif '%%' in e:\n"
		 "        n, s = e.split('%%')\n"
		 "        i = zipfile.ZipInfo(n); i.compress_type = zipfile.ZIP_DEFLATED\n"
		 "        with z.open(i, 'w', force_zip64=True) as f:\n"
		 "            for _ in range(int(s) >> 20): f.write(bytes(1 << 20))\n"
		 "    else:\n"
		 "        n, t = e.split('=', 1)\n"
		 "        z.writestr(n, t)\n"
		 "z.close()\n"
		 "EOF",
		 out, entries);
	cr_assert_eq(system(cmd), 0, "python3 zipfile");
}

/* Reads the zip entries gives as a package: 0, or -1 with err. */
static int from_py_zip(const char *entries, char *err, size_t errlen)
{
	char path[400];
	snprintf(path, sizeof path, "%s/t.zip", tmp);
	py_zip(path, entries);
	struct strbuf zip = STRBUF_INIT;
	cr_assert_eq(strbuf_read_file(&zip, path, 64 << 20), 0);
	struct package pk;
	int rc = package_from_zip(&pk, zip.buf, zip.len, tmp, &caps, err, errlen);
	package_release(&pk);
	strbuf_release(&zip);
	return rc;
}

#define YAML "problem.yaml=name: x\n"

Test(package, zip_top_folder_and_hostile_entries, .init = setup, .fini = teardown)
{
	char err[512];
	char path[400];
	snprintf(path, sizeof path, "%s/t.zip", tmp);
	/* one top-level folder: it is the package; __MACOSX and dot names left out */
	py_zip(path,
	       "hello/" YAML "|hello/data/sample/1.in=1|__MACOSX/hello/._x=junk|hello/.DS_Store=x");
	struct strbuf zip = STRBUF_INIT;
	cr_assert_eq(strbuf_read_file(&zip, path, 1 << 20), 0);
	struct package pk;
	cr_assert_eq(package_from_zip(&pk, zip.buf, zip.len, tmp, &caps, err, sizeof err), 0, "%s",
		     err);
	cr_assert_eq(pk.nfiles, 2);
	cr_assert_str_eq(pk.files[0].path, "data/sample/1.in");
	cr_assert(strstr(pk.dir, "/hello"), "%s", pk.dir);
	package_release(&pk);
	strbuf_release(&zip);

	cr_assert_eq(from_py_zip(YAML "|../evil=x", err, sizeof err), -1);
	cr_assert(strstr(err, "'../evil' in the zip: '.' and '..' are not allowed"), "%s", err);
	cr_assert_eq(from_py_zip(YAML "|/etc/cron.d/evil=x", err, sizeof err), -1);
	cr_assert(strstr(err, "absolute path"), "%s", err);
	cr_assert_eq(from_py_zip(YAML "|data/../../evil=x", err, sizeof err), -1);
	cr_assert(strstr(err, "'data/../../evil'"), "%s", err);
	cr_assert_eq(from_py_zip(YAML "|data/secret/1.in@link=/etc/shadow", err, sizeof err), -1);
	cr_assert(strstr(err, "'data/secret/1.in' in the zip is not a regular file"), "%s", err);
	cr_assert_eq(from_py_zip(YAML "|data=x|data/secret/1.in=y", err, sizeof err), -1);
	cr_assert(strstr(err, "both a file and a folder"), "%s", err);
	cr_assert_eq(from_py_zip("data/secret/1.in=y", err, sizeof err), -1);
	cr_assert(strstr(err, "no problem.yaml"), "%s", err);
	/* a bomb: 64 MiB of zeros (a 64 KiB zip) stop at the 1 MiB cap, naming the file */
	cr_assert_eq(from_py_zip(YAML "|data/secret/big.in%67108864", err, sizeof err), -1);
	cr_assert(strstr(err, "'data/secret/big.in': the zip's files are larger than 1048576"),
		  "%s", err);
	/* nothing of a refused zip stays behind */
	char cmd[600];
	snprintf(cmd, sizeof cmd, "test -z \"$(ls -d '%s'/judge-package-* 2>/dev/null)\"", tmp);
	cr_assert_eq(system(cmd), 0, "temporary folders left");
}
