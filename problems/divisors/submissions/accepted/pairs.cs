using System;
using System.Text;

class Divisors
{
    static void Main()
    {
        long n = long.Parse(Console.ReadLine().Trim());
        var sb = new StringBuilder();
        for (long i = 1; i * i <= n; i++)
            if (n % i == 0)
            {
                sb.Append(i).Append('\n');
                if (i != n / i)
                    sb.Append(n / i).Append('\n');
            }
        Console.Write(sb.ToString());
    }
}
