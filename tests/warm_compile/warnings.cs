// compiles with warnings (CS0168, CS0219, CS8600 is off: no nullable context), and runs
class P
{
	static void Main()
	{
		int a;
		int b = 1;
#warning a warning of the source's own
		System.Console.WriteLine(string.Join(",", System.Linq.Enumerable.Range(1, 5)));
	}
}
