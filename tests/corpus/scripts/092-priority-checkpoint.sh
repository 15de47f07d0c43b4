#!/bin/bash
#PBS -p 10
#PBS -c n
#PBS -l select=1:ncpus=1
sleep 1
