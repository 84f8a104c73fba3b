using System;

class Mirror
{
    static void Main()
    {
        Console.ReadLine();
        char[] w = Console.ReadLine().Trim().ToCharArray();
        Array.Reverse(w);
        Console.WriteLine(new string(w));
    }
}
