using System;

// int overflows for n above 2^31
class Divisors
{
    static void Main()
    {
        long n = long.Parse(Console.ReadLine().Trim());
        int m = unchecked((int)n);
        for (int i = 1; (long)i * i <= n; i++)
            if (m % i == 0)
            {
                Console.WriteLine(i);
                if (i != m / i)
                    Console.WriteLine(m / i);
            }
    }
}
