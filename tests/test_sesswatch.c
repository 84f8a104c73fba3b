/* test_sesswatch: the events a watcher tells from two listings of its folder. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/service/session/sesswatch.h"

#define F(n, size, mt, mode, ino)                                                                  \
	{                                                                                          \
		(char *)n, 'f', size, mt, 0, mode, ino                                             \
	}
#define D(n, ino)                                                                                  \
	{                                                                                          \
		(char *)n, 'd', 4096, 1, 0, 0755, ino                                              \
	}

/* The events of a -> b as "TYPE name" lines. */
static char *events(const struct sesswatch_entry *a, size_t na, const struct sesswatch_entry *b,
		    size_t nb)
{
	cJSON *ev = cJSON_CreateArray(), *e;
	sesswatch_diff(a, na, b, nb, ev);
	static char buf[1024];
	buf[0] = 0;
	cJSON_ArrayForEach(e, ev)
	{
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
		strcat(buf, t + strlen("EVENT_TYPE_"));
		strcat(buf, " ");
		strcat(buf, cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")));
		strcat(buf, "\n");
	}
	cJSON_Delete(ev);
	return buf;
}

Test(sesswatch, nothing_changed_nothing_told)
{
	struct sesswatch_entry a[] = {F("a", 1, 5, 0644, 10), D("d", 11)};
	cr_assert_str_eq(events(a, 2, a, 2), "");
}

Test(sesswatch, a_new_file_with_bytes_is_created_and_written)
{
	struct sesswatch_entry a[] = {D("d", 11)};
	struct sesswatch_entry b[] = {F("a", 3, 5, 0644, 10), F("b", 0, 5, 0644, 12), D("d", 11)};
	cr_assert_str_eq(events(a, 1, b, 3), "CREATE a\nWRITE a\nCREATE b\n");
}

Test(sesswatch, a_write_within_the_same_second_is_seen)
{
	struct sesswatch_entry a[] = {F("a", 3, 5, 0644, 10)};
	struct sesswatch_entry b[] = {F("a", 3, 5, 0644, 10)};
	b[0].mtime_ns = 1000;
	cr_assert_str_eq(events(a, 1, b, 1), "WRITE a\n");
}

Test(sesswatch, chmod_and_remove)
{
	struct sesswatch_entry a[] = {F("a", 3, 5, 0644, 10), F("b", 3, 5, 0644, 12)};
	struct sesswatch_entry b[] = {F("a", 3, 5, 0600, 10)};
	cr_assert_str_eq(events(a, 2, b, 1), "REMOVE b\nCHMOD a\n");
}

Test(sesswatch, a_rename_is_its_old_name_renamed_and_its_new_one_created)
{
	struct sesswatch_entry a[] = {F("old", 3, 5, 0644, 10)};
	struct sesswatch_entry b[] = {F("new", 3, 5, 0644, 10)};
	cr_assert_str_eq(events(a, 1, b, 1), "RENAME old\nCREATE new\n");
}

Test(sesswatch, a_folders_own_times_are_not_a_write)
{
	struct sesswatch_entry a[] = {D("d", 11)};
	struct sesswatch_entry b[] = {D("d", 11), F("d/x", 1, 5, 0644, 13)};
	b[0].mtime = 99;
	cr_assert_str_eq(events(a, 1, b, 2), "CREATE d/x\nWRITE d/x\n");
}

Test(sesswatch, a_file_replaced_by_a_folder)
{
	struct sesswatch_entry a[] = {F("x", 1, 5, 0644, 10)};
	struct sesswatch_entry b[] = {D("x", 14)};
	cr_assert_str_eq(events(a, 1, b, 1), "REMOVE x\nCREATE x\n");
}
