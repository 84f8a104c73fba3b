#!/usr/bin/env python2
print 1
