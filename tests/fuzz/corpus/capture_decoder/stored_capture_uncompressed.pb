
$sim-qcom-101-20261130T080000Z-000001sim-qcom-1012026-11-30T08:00:00Z"–
capture.json…{
 "format": 1,
 "device_id": "sim-qcom-101",
 "captured_at": "2026-11-30T08:00:00Z",
 "page_size": 4096,
 "ddr_size_kb": 16777216
}
"
proc "é
proc/meminfoØMemTotal:      16297088 kB
MemFree:         273773 kB
MemAvailable:   1809054 kB
Buffers:          17667 kB
Cached:         1337781 kB
SwapCached:        2911 kB
Active:         1466838 kB
Inactive:       1807290 kB
Active(anon):    863429 kB
Inactive(anon):  684318 kB
Active(file):    500919 kB
Inactive(file):  794594 kB
Unevictable:     185466 kB
Mlocked:         162605 kB
SwapTotal:      6291452 kB
SwapFree:       5673562 kB
Dirty:             1654 kB
Writeback:            0 kB
AnonPages:      2385631 kB
Mapped:          818384 kB
Shmem:            28244 kB
KReclaimable:    262762 kB
Slab: "
proc/1/oom_score_adjEACCES