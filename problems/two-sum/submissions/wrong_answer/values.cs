using System;
using System.Collections.Generic;
using System.IO;

// prints the two values instead of their indices
class TwoSum
{
    static void Main()
    {
        var all = new StreamReader(Console.OpenStandardInput()).ReadToEnd()
            .Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
        int n = int.Parse(all[0]);
        long t = long.Parse(all[1]);
        var seen = new HashSet<long>();
        for (int j = 0; j < n; j++)
        {
            long x = long.Parse(all[2 + j]);
            if (seen.Contains(t - x))
            {
                Console.WriteLine($"{t - x} {x}");
                return;
            }
            seen.Add(x);
        }
    }
}
