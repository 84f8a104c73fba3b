using System;

class Guess
{
    static void Main()
    {
        int lo = 1, hi = 1000;
        while (true)
        {
            int mid = (lo + hi) / 2;
            Console.WriteLine(mid);
            string reply = (Console.ReadLine() ?? "").Trim();
            if (reply == "correct")
                return;
            if (reply == "lower")
                hi = mid - 1;
            else
                lo = mid + 1;
        }
    }
}
