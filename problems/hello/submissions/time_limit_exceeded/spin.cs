class Spin
{
    static void Main()
    {
        long x = 0;
        while (x >= 0)
            x = (x + 1) % 1000;
        System.Console.WriteLine(x);
    }
}
