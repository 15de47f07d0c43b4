#!/bin/bash
#PBS -N dis=1.636-0.2per
#PBS -l select=4
echo x
