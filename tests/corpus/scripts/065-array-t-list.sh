#!/bin/bash
#PBS -l nodes=1:ppn=1
#PBS -t 0,10,20,30,40
work $PBS_ARRAYID
