#!/bin/bash
        #PBS -V
        #PBS -q gen5
        #PBS -l nodes=2:ppn=8
        

        cd ${PBS_O_WORKDIR}
        mpirun -npernode 1 sss2 -omp 8 input
