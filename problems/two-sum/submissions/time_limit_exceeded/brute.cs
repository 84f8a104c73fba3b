using System;
using System.IO;

class TwoSum
{
    static void Main()
    {
        var all = new StreamReader(Console.OpenStandardInput()).ReadToEnd()
            .Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
        int n = int.Parse(all[0]);
        long t = long.Parse(all[1]);
        var a = new long[n];
        for (int i = 0; i < n; i++)
            a[i] = long.Parse(all[2 + i]);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (a[i] + a[j] == t)
                {
                    Console.WriteLine($"{i} {j}");
                    return;
                }
    }
}
