// dies by SIGSEGV: a write through a null pointer
int main()
{
	volatile int *p = nullptr;
	*p = 1;
}
