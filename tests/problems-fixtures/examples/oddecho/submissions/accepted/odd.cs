using System;

class Odd
{
    static void Main()
    {
        int n = int.Parse(Console.ReadLine().Trim());
        for (int i = 0; i < n; i++)
        {
            string w = Console.ReadLine().Trim();
            if (i % 2 == 0)
                Console.WriteLine(w);
        }
    }
}
