// 32-bit numbers: the small group's 40 points only.
using System;

class Sum
{
    static void Main()
    {
        Console.ReadLine();
        int s = 0;
        foreach (string w in Console.ReadLine().Split(' ', StringSplitOptions.RemoveEmptyEntries))
            s += int.TryParse(w, out int v) ? v : 0;
        Console.WriteLine(s);
    }
}
