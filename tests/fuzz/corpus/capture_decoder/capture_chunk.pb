
c1Ù
proc/meminfoÈMemTotal:      16297088 kB
MemFree:         273773 kB
MemAvailable:   1809054 kB
Buffers:          17667 kB
Cached:         1337781 kB
SwapCached:        2911 kB
Active:         1466838 kB
Inactive:  
proc/meminfotail
(

proc/2 
proc/2/smapsENOENT