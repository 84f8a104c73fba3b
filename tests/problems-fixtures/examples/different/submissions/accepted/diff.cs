using System;

class Different
{
    static void Main()
    {
        string line;
        while ((line = Console.ReadLine()) != null)
        {
            string[] w = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (w.Length < 2)
                continue;
            Console.WriteLine(Math.Abs(long.Parse(w[0]) - long.Parse(w[1])));
        }
    }
}
