using System;
using System.Globalization;

class Area
{
    static void Main()
    {
        double r = double.Parse(Console.ReadLine(), CultureInfo.InvariantCulture);
        Console.WriteLine((Math.PI * r * r).ToString("E12", CultureInfo.InvariantCulture));
    }
}
