using System;

class Sum
{
    static void Main()
    {
        var p = Console.ReadLine().Split(' ', StringSplitOptions.RemoveEmptyEntries);
        Console.WriteLine(long.Parse(p[0]) + long.Parse(p[1]));
    }
}
