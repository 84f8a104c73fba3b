using System;
using System.Collections.Generic;
using System.IO;

class TwoSum
{
    static void Main()
    {
        var all = new StreamReader(Console.OpenStandardInput()).ReadToEnd()
            .Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
        int n = int.Parse(all[0]);
        long t = long.Parse(all[1]);
        var seen = new Dictionary<long, int>();
        for (int j = 0; j < n; j++)
        {
            long x = long.Parse(all[2 + j]);
            if (seen.TryGetValue(t - x, out int i))
            {
                Console.WriteLine($"{i} {j}");
                return;
            }
            seen.TryAdd(x, j);
        }
    }
}
