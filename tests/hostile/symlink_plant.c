/* symlink_plant: plants links in the box towards host files before the host cleans
 * the box (/tmp/judge-hostile-victim and its folder are prepared by the test). */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	symlink("/tmp/judge-hostile-victim", "/box/x");
	symlink("/tmp/judge-hostile-victim-dir", "/box/d");
	symlink("/etc/passwd", "/box/main.c");
	mkdir("/box/sub", 0755);
	symlink("/tmp/judge-hostile-victim-dir", "/box/sub/deep");
	if (link("/etc/passwd", "/box/hard") == 0)
		puts("LEAK hard link across file systems");
	unlink("/box/main");
	symlink("/tmp/judge-hostile-victim", "/box/main");
	puts("planted");
	return 0;
}
