// Thinks forever on the first pass.
int main()
{
	volatile unsigned long x = 0;
	for (;;)
		x++;
}
