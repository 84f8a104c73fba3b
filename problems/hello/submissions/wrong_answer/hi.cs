class Hi
{
    static void Main()
    {
        System.Console.WriteLine("Hi World!");
    }
}
