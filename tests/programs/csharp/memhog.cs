// keeps ever more memory, 16 MB at a time, each byte written
var keep = new List<byte[]>();
while (true)
{
    var block = new byte[16 << 20];
    Array.Fill(block, (byte)1);
    keep.Add(block);
}
