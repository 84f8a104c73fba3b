class Broken
{
    static void Main()
    {
        int x = "Hello World!";
        System.Console.WriteLine(x);
    }
}
