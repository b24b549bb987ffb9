# a user pattern
asv-wrrw: w t1 x u1, r t2 x u2, r t2 y u2, w t1 y u1

three consecutive: w t1 x u1, r t2 x u2
mix: r t1 x u1, w t2 x u2, w t3 y u3, r t1 y u1 # trailing
