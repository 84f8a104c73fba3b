# dies by SIGSEGV: reads address 0 through ctypes
import ctypes

ctypes.string_at(0)
