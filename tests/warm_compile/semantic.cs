class P
{
	static void Main()
	{
		int unused;
		Foo();
		string s = 42;
	}
}
