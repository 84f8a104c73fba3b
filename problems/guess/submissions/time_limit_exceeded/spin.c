/* Thinks forever before its first guess. */
int main(void)
{
	volatile unsigned long x = 0;
	for (;;)
		x++;
}
