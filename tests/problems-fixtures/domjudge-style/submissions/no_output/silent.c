/* No annotation: the folder says NO-OUTPUT (a wrong answer with no output). */
int main(void)
{
	return 0;
}
