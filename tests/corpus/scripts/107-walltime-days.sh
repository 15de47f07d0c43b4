#!/bin/sh
#PBS -M someone@vanderbilt.edu
#PBS -m bae
#PBS -l walltime=4:00:00:00
#PBS -l mem=5000mb
./pdbmap.py -c metabochip.config
