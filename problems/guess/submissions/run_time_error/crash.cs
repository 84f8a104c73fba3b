using System;

class Guess
{
    static void Main()
    {
        Console.WriteLine(500);
        string reply = Console.ReadLine();
        throw new InvalidOperationException("gave up after " + reply);
    }
}
