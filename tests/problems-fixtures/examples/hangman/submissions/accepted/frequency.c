#include <stdio.h>
#include <string.h>

int main(void)
{
	char guessed[64] = "";
	if (!fgets(guessed, sizeof guessed, stdin))
		return 1;
	for (const char *c = "etaoinshrdlcumwfgypbvkjxqz"; *c; c++)
		if (!strchr(guessed, *c)) {
			printf("%c\n", *c);
			break;
		}
	return 0;
}
