using System;

class Program
{
    static void Main()
    {
        Console.WriteLine("hello world");
    }
}
