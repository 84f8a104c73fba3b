// Binary search that mixes up lower and higher.
using System;

class Guess
{
    static void Main()
    {
        int lo = 1, hi = 1000;
        while (lo <= hi)
        {
            int mid = (lo + hi) / 2;
            Console.WriteLine(mid);
            string reply = (Console.ReadLine() ?? "").Trim();
            if (reply == "correct" || reply == "")
                return;
            if (reply == "higher")
                hi = mid - 1;
            else
                lo = mid + 1;
        }
    }
}
