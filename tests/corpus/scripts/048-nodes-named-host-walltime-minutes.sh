#!/bin/bash 
#PBS -k o 
#PBS -l nodes=node1:ppn=1,walltime=10000:00
#PBS -N SampleTorqueJob
python3 solve.py
