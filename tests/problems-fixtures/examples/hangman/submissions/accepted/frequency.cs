using System;

class Guess
{
    static void Main()
    {
        string guessed = Console.ReadLine() ?? "";
        foreach (char c in "etaoinshrdlcumwfgypbvkjxqz")
            if (guessed.IndexOf(c) < 0)
            {
                Console.WriteLine(c);
                return;
            }
    }
}
