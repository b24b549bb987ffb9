race-RW consecutive: r t1 x u1, w t2 x u2
race-WR consecutive: w t1 x u1, r t2 x u2
race-WW consecutive: w t1 x u1, w t2 x u2
atomicity-RWR: r t1 x u1, w t2 x u2, r t1 x u1
atomicity-RWW: r t1 x u1, w t2 x u2, w t1 x u1
atomicity-WWR: w t1 x u1, w t2 x u2, r t1 x u1
atomicity-WRW: w t1 x u1, r t2 x u2, w t1 x u1
atomicity-WWW: w t1 x u1, w t2 x u2, w t1 x u1
atomic-set-5: r t1 x u1, w t2 x u2, w t2 y u2, r t1 y u1
atomic-set-6: w t1 x u1, w t2 x u2, w t2 y u2, w t1 y u1
atomic-set-7: w t1 x u1, w t2 y u2, w t2 x u2, w t1 y u1
atomic-set-8: w t1 x u1, r t2 x u2, r t2 y u2, w t1 y u1
atomic-set-9: w t1 x u1, r t2 y u2, r t2 x u2, w t1 y u1
atomic-set-10: r t1 x u1, w t2 y u2, w t2 x u2, r t1 y u1
atomic-set-11: w t1 x u1, r t2 y u2, w t1 y u1, r t2 x u2
