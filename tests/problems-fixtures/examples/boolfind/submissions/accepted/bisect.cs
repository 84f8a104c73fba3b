using System;

class Bisect
{
    static void Main()
    {
        long n = long.Parse(Console.ReadLine());
        long lo = 0, hi = n;
        while (lo < hi)
        {
            long mid = (lo + hi) / 2;
            Console.WriteLine("READ " + mid);
            if (Console.ReadLine().Trim() == "true")
                hi = mid;
            else
                lo = mid + 1;
        }
        Console.WriteLine("OUTPUT " + lo);
    }
}
