using System;
using System.Globalization;

class Area
{
    static void Main()
    {
        double r = double.Parse(Console.ReadLine(), CultureInfo.InvariantCulture);
        Console.WriteLine((2 * Math.PI * r).ToString(CultureInfo.InvariantCulture));
    }
}
