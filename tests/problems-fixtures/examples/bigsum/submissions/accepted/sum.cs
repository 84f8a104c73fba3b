using System;

class Sum
{
    static void Main()
    {
        Console.ReadLine();
        long s = 0;
        foreach (string w in Console.ReadLine().Split(' ', StringSplitOptions.RemoveEmptyEntries))
            s += long.Parse(w);
        Console.WriteLine(s);
    }
}
