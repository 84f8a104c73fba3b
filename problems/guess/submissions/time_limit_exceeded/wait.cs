// Waits for a reply before its first guess.
using System;

class Guess
{
    static void Main()
    {
        Console.ReadLine();
    }
}
