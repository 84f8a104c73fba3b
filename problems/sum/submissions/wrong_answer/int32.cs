using System;

class Sum
{
    static void Main()
    {
        var p = Console.ReadLine().Split(' ', StringSplitOptions.RemoveEmptyEntries);
        int a = unchecked((int)long.Parse(p[0])), b = unchecked((int)long.Parse(p[1]));
        Console.WriteLine(unchecked(a + b));
    }
}
