#!/bin/bash
#PBS -N dos
#PBS -l nodes=1:ppn=8
echo hi
