class Program
{
    static void Main()
    {
        System.Console.WriteLine(undeclared_variable);
    }
}
